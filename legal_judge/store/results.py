"""Judge calls, verdicts, ensemble results and the caches (tables ``judge_calls``, ``verdicts``,
``ensemble_results``, ``provider_cache``, ``lookup_cache``), and the writes of one judged call.

Every judge call is committed as it completes: a run's judged call (its log rows, its response's
cache entry and its verdict) in one transaction, so a killed run resumes from what is here.

One judged call's rows are collected and committed together by
:class:`~legal_judge.store.writes.PendingWrites` (and, on a server, off the event loop).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from legal_judge.store.base import (
    canonical_json,
    decode_fields,
    document_json,
    json_fields,
    names_the_run,
    utcnow,
)
from legal_judge.store.writes import (
    INSERT_VERDICT,
    SAVE_RESULT,
    CommitsMixin,
    PendingWrites,
    result_row,
)

__all__ = ["ResultsMixin"]


class ResultsMixin(CommitsMixin):
    """The :class:`~legal_judge.store.Store` methods of calls, verdicts, results and caches."""

    @names_the_run
    def record_call(self, run_id: str, item_id: str, judge: str, *, purpose: str, attempt: int,
                    request: dict[str, Any], response_text: str | None, usage: dict[str, Any] | None,
                    latency_ms: float | None, cached: bool, retries: int, error: str | None) -> None:
        """Append one provider call (successful or not) to the call log, committed at once."""
        writes = PendingWrites(self)
        writes.call(run_id, item_id, judge, purpose=purpose, attempt=attempt, request=request,
                    response_text=response_text, usage=usage, latency_ms=latency_ms,
                    cached=cached, retries=retries, error=error)
        writes.flush()

    @names_the_run
    def save_verdict(self, run_id: str, item_id: str, judge: str, verdict: dict[str, Any]) -> None:
        """Commit one judge's verdict on one item."""
        writes = PendingWrites(self)
        writes.verdict(run_id, item_id, judge, verdict)
        writes.flush()

    def load_verdicts(self, run_id: str) -> dict[tuple[str, str], dict[str, Any]]:
        """Verdicts of a run keyed by (item_id, judge)."""
        rows = self.db.execute(
            "SELECT item_id, judge, verdict_json FROM verdicts WHERE run_id = ?", (run_id,)
        )
        return {(r[0], r[1]): json.loads(r[2]) for r in rows}

    @names_the_run
    def save_result(self, run_id: str, item_id: str, result: dict[str, Any]) -> None:
        """Commit the ensemble result of one item."""
        self.autocommit(SAVE_RESULT, result_row(run_id, item_id, result))

    @names_the_run
    def save_verdicts(self, run_id: str, item_id: str, verdicts: list[tuple[str, dict[str, Any]]],
                      result: dict[str, Any] | None = None) -> None:
        """Commit verdicts ``(judge, verdict)`` of one item, and its result if given, at once.

        One transaction instead of one per row: verdicts reused from the cache cost nothing to
        make again, so they may wait for the item's result (what a cached rerun is made of).
        """
        if not verdicts and result is None:
            return
        now = utcnow()
        with self.transaction() as db:
            for judge, verdict in verdicts:
                db.execute(INSERT_VERDICT, _verdict_row(run_id, item_id, judge, verdict, now))
            if result is not None:
                db.execute(SAVE_RESULT, result_row(run_id, item_id, result, now))

    def iter_verdicts(self, run_id: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Verdicts of a run one at a time (large runs: nothing else is kept in memory)."""
        cursor = self.db.execute(
            "SELECT item_id, judge, verdict_json FROM verdicts WHERE run_id = ?", (run_id,))
        for item_id, judge, data in cursor:
            yield item_id, judge, json.loads(data)

    def iter_results(self, run_id: str, *, fields: tuple[str, ...] | None = None,
                     ) -> Iterator[tuple[str, dict[str, Any]]]:
        """Ensemble results of a run one at a time.

        Args:
            fields: Read only these keys of each result (two or more; a missing one is None).
        """
        column = "result_json" if fields is None else json_fields("result_json", fields)
        cursor = self.db.execute(
            f"SELECT item_id, {column} FROM ensemble_results WHERE run_id = ?",  # noqa: S608
            (run_id,))
        for item_id, data in cursor:
            yield item_id, json.loads(data) if fields is None else decode_fields(data, fields)

    def load_results(self, run_id: str) -> dict[str, dict[str, Any]]:
        """Ensemble results of a run keyed by item id."""
        rows = self.db.execute(
            "SELECT item_id, result_json FROM ensemble_results WHERE run_id = ?", (run_id,)
        )
        return {r[0]: json.loads(r[1]) for r in rows}

    def call_counts(self, run_id: str) -> dict[str, int]:
        """Provider calls of a run: total, cached, failed, retries."""
        row = self.db.execute(
            """SELECT COUNT(*), COALESCE(SUM(cached), 0), COUNT(*) FILTER (WHERE error IS NOT NULL),
                      COALESCE(SUM(retries), 0) FROM judge_calls WHERE run_id = ?""",
            (run_id,),
        ).fetchone()
        return {"calls": row[0], "cached": row[1], "failed": row[2], "retries": row[3]}

    def call_errors(self, run_id: str) -> list[tuple[str, str, int]]:
        """The failed provider calls of a run: ``(judge, error, how many)``, most frequent first."""
        rows = self.db.execute(
            """SELECT judge, error, COUNT(*) AS n FROM judge_calls
               WHERE run_id = ? AND error IS NOT NULL GROUP BY judge, error
               ORDER BY n DESC, judge, error""",
            (run_id,),
        ).fetchall()
        return [(str(r[0]), str(r[1]), int(r[2])) for r in rows]

    def result_text(self, run_id: str, item_id: str) -> str | None:
        """One item's stored ensemble result as its JSON text (decoded by the caller's model)."""
        row = self.db.execute(
            "SELECT result_json FROM ensemble_results WHERE run_id = ? AND item_id = ?",
            (run_id, item_id)).fetchone()
        return str(row[0]) if row is not None else None

    def result_item_ids(self, run_id: str) -> list[str]:
        """The ids of the items of a run that have an ensemble result."""
        rows = self.db.execute("SELECT item_id FROM ensemble_results WHERE run_id = ?",
                               (run_id,)).fetchall()
        return [str(r[0]) for r in rows]

    def result_count(self, run_id: str) -> int:
        """How many items of a run have an ensemble result."""
        return int(self.db.execute("SELECT COUNT(*) FROM ensemble_results WHERE run_id = ?",
                                   (run_id,)).fetchone()[0])

    def verdict_rows(self, run_id: str) -> list[dict[str, Any]]:
        """A run's ``verdicts`` rows as stored (JSON undecoded), by judge."""
        return [dict(r) for r in self.db.execute(
            f"SELECT {_VERDICT_COLUMNS} FROM verdicts WHERE run_id = ? ORDER BY judge",
            (run_id,))]

    def call_rows(self, run_id: str) -> list[dict[str, Any]]:
        """A run's ``judge_calls`` rows as stored (JSON undecoded), in call order."""
        return [dict(r) for r in self.db.execute(
            "SELECT * FROM judge_calls WHERE run_id = ? ORDER BY id", (run_id,))]

    def result_rows(self, run_id: str) -> list[dict[str, Any]]:
        """A run's ``ensemble_results`` rows as stored (JSON undecoded)."""
        return [dict(r) for r in self.db.execute(
            "SELECT * FROM ensemble_results WHERE run_id = ?", (run_id,))]

    def ok_results_since(self, since: str) -> Iterator[dict[str, Any]]:
        """Ensemble results with status ``ok`` stored at or after ``since`` (ISO), of every run,
        each with its item: ``{"result", "item", "created_at", "run_id"}`` (decoded)."""
        rows = self.db.execute(
            """SELECT e.result_json, i.item_json, e.created_at, e.run_id FROM ensemble_results e
               JOIN items i ON i.run_id = e.run_id AND i.item_id = e.item_id
               WHERE e.status = 'ok' AND e.created_at >= ?""", (since,))
        for result, item, created_at, run_id in rows:
            yield {"result": json.loads(result), "item": json.loads(item),
                   "created_at": created_at, "run_id": run_id}

    # caches ------------------------------------------------------------------------------------
    def cache_get(self, key: str) -> dict[str, Any] | None:
        """A cached provider response, or None (also one queued for a commit not yet made)."""
        queued = self.queued_response(key)
        if queued is not None:
            return dict(json.loads(queued))
        row = self.db.execute(
            "SELECT response_json FROM provider_cache WHERE key = ?", (key,)
        ).fetchone()
        return json.loads(row[0]) if row else None

    def cache_put(self, key: str, *, provider: str, model: str, response: dict[str, Any]) -> None:
        """Remember a provider response under its request key."""
        writes = PendingWrites(self)
        writes.cache(key, provider=provider, model=model, response=response)
        writes.flush()

    def cached_verdicts(self, keys: list[str]) -> dict[str, str]:
        """The cached verdicts of these verdict keys (one read for all of them), by key, as their
        JSON text (decoded by the judge that reuses them: :meth:`Judge.cached_verdict`).

        A verdict is cached where it was stored: a run's verdict row carries its key
        (``verdicts.verdict_key``), a judge used on its own (and versions before the key column)
        put it in ``provider_cache``. The newest of the two answers, as when one table held both.
        """
        newest: dict[str, tuple[str, str]] = {}
        for start in range(0, len(keys), _KEYS_PER_READ):  # SQLite caps a statement's parameters
            part = keys[start:start + _KEYS_PER_READ]
            marks = ", ".join("?" * len(part))
            rows = self.db.execute(
                f"""SELECT verdict_key, verdict_json, created_at FROM verdicts WHERE rowid IN (
                        SELECT MAX(rowid) FROM verdicts WHERE verdict_key IN ({marks})
                        GROUP BY verdict_key)
                    UNION ALL
                    SELECT key, response_json, created_at FROM provider_cache
                    WHERE key IN ({marks})""",
                (*part, *part)).fetchall()
            for key, text, created_at in rows:
                if key not in newest or created_at > newest[key][1]:
                    newest[key] = (text, created_at)
        # Verdicts still queued for their commit (a run on a server) are the newest of all.
        return {**{key: str(text) for key, (text, _) in newest.items()},
                **self.queued_verdicts(keys)}

    def lookup_get(self, key: str) -> dict[str, Any] | None:
        """A cached citation lookup (CourtListener), or None."""
        row = self.db.execute("SELECT value_json FROM lookup_cache WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def lookup_put(self, key: str, value: dict[str, Any]) -> None:
        """Remember a citation lookup."""
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO lookup_cache VALUES (?, ?, ?)",
                       (key, canonical_json(value), utcnow()))


#: Keys per read of :meth:`ResultsMixin.cached_verdicts` (twice that many parameters; SQLite
#: builds before 3.32 allow 999).
_KEYS_PER_READ = 400
_VERDICT_COLUMNS = "run_id, item_id, judge, judge_id, status, verdict_json, created_at"


def _verdict_row(run_id: str, item_id: str, judge: str, verdict: dict[str, Any],
                 now: str | None = None) -> tuple[Any, ...]:
    return (run_id, item_id, judge, verdict["judge_id"], verdict["status"],
            document_json(verdict), now or utcnow(), None)  # served from the cache: no key
