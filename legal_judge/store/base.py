"""The one connection and transaction discipline of the store (every table module builds on it).

A store is one SQLite file in WAL mode opened with one connection shared by the threads of a
process under one re-entrant lock. Writes either run in :meth:`StoreBase.transaction` (``BEGIN
IMMEDIATE`` ... ``COMMIT``; a transaction opened inside another is a savepoint of it, so a caller can
write several tables all or nothing through their own methods) or, for one statement on the hot
path, in autocommit (:meth:`StoreBase.autocommit`). Opening quick-checks the file, waits for the
WAL switch within the busy timeout and applies the migrations of :mod:`legal_judge.store.migrations`.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import pydantic_core

from legal_judge.config import check_store_address, is_postgres_url, store_target
from legal_judge.errors import StoreError
from legal_judge.store.connection import BUSY_TIMEOUT_S, connect, enable_wal, quick_check
from legal_judge.store.migrations import MIGRATIONS
from legal_judge.store.postgres import PgConnection

__all__ = ["StoreBase", "canonical_json", "document_json", "names_the_run", "resume_fix_on_full",
           "utcnow"]

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S", bound="StoreBase")

_SAVEPOINT = "store_nested"


def utcnow() -> str:
    """Current UTC time as ISO 8601 with microseconds."""
    return datetime.now(UTC).isoformat()


#: One encoder for every canonical document (``json.dumps`` with options builds one per call).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> str:
    """Sorted, compact JSON: the form used for hashes and cache keys."""
    return _CANONICAL.encode(value)


def document_json(value: Any) -> str:
    """Compact JSON of a stored document (an item, a verdict, a result), keys in the order built.

    Not for hashes or keys (:func:`canonical_json` is): every reader decodes these documents, and
    none depends on their key order. pydantic-core's encoder writes them in a third to a half of
    the time of ``json``'s sorted one, which was the largest single cost of storing a cached
    rerun's verdicts and results. Non-finite floats are written as ``NaN``/``Infinity``, as
    ``json`` writes (and reads) them.
    """
    return pydantic_core.to_json(value).decode()


def json_fields(column: str, fields: tuple[str, ...]) -> str:
    """SQL reading only ``fields`` (top-level keys, two or more) of a JSON ``column``: one JSON
    array, decoded by :func:`decode_fields`. A summary of a large run reads a few keys of every
    verdict; decoding the whole document (rationales, the judge's raw output) in Python cost
    more than the rest of the summary."""
    if len(fields) < 2:
        raise ValueError("json_fields needs two or more fields (one path returns a bare value)")
    return f"json_extract({column}, {', '.join(repr(f'$.{f}') for f in fields)})"


def decode_fields(text: str, fields: tuple[str, ...]) -> dict[str, Any]:
    """The ``fields`` :func:`json_fields` read, by name (a missing key is None).

    On PostgreSQL the query read the whole document (jsonb would refuse the ``NaN`` a document
    may hold), and the fields are picked here.
    """
    values = json.loads(text)
    if isinstance(values, dict):
        return {field: values.get(field) for field in fields}
    return dict(zip(fields, values, strict=True))


@contextmanager
def resume_fix_on_full(store: StoreBase, run_id: str | None) -> Iterator[None]:
    """On a full disk, the fix names the exact resume command of the run being written."""
    try:
        yield
    except StoreError as exc:
        if exc.code != "store-full" or run_id is None:
            raise
        raise StoreError(exc.message, code=exc.code, fix=store.resume_fix(run_id)) from exc


def names_the_run(method: Callable[Concatenate[S, str, P], R]) -> Callable[Concatenate[S, str, P], R]:
    """On a full disk, the fix names the exact resume command of the run being written."""
    @functools.wraps(method)
    def wrapper(self: S, run_id: str, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with resume_fix_on_full(self, run_id):
            return method(self, run_id, *args, **kwargs)
    return wrapper


class StoreBase:
    """The connection, its lock, transactions and migrations (no table's queries)."""

    def __init__(self, path: Path | str | None = None, *,
                 timeout_s: float = BUSY_TIMEOUT_S) -> None:
        """Open (and create or migrate) the store.

        Args:
            path: The store file, or a ``postgresql://`` URL; default ``$LEGAL_JUDGE_STORE``
                when set, else ``$LEGAL_JUDGE_HOME/store.sqlite3``.
            timeout_s: How long a statement waits for another process's lock.

        Raises:
            StoreError: the store is damaged, full, locked, read-only or from a newer version.
            StoreUnavailable: a PostgreSQL store's server cannot be reached (exit 3).
        """
        target = path if path is not None else store_target()
        if isinstance(target, str):  # a URL of another scheme is no file name
            target = check_store_address(target, named="the store")
        self._lock = threading.RLock()
        if is_postgres_url(target):
            server = PgConnection(str(target), timeout_s)
            self.path: Path = server.store_path
            # PgConnection speaks the subset of sqlite3.Connection the store's modules use.
            self.db: sqlite3.Connection = cast(sqlite3.Connection, server)
            self.postgres: PgConnection | None = server
        else:
            self.path = Path(target)
            self.db = connect(self.path, timeout_s)
            self.postgres = None
        try:
            if self.postgres is None:
                enable_wal(self.db)  # type: ignore[arg-type]  # connect() made a StoreConnection
                self.db.execute("PRAGMA synchronous=NORMAL")
                self.db.execute("PRAGMA foreign_keys=ON")
                quick_check(self.db, self.path)  # type: ignore[arg-type]
            if self._migrate() and self.postgres is not None:
                self.postgres.refresh_catalog()  # the migrations changed the tables
        except BaseException:
            self.db.close()
            raise

    def _migrate(self) -> bool:
        """Apply the migrations not applied yet; whether there were any."""
        with self.transaction():
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            applied = {r[0] for r in self.db.execute("SELECT name FROM _migrations")}
            known = {name for name, _ in MIGRATIONS}
            if applied - known:
                raise StoreError(
                    f"the store at {self.path} was written by a newer legal-judge "
                    f"(unknown migrations: {', '.join(sorted(applied - known))})",
                    code="store-newer",
                    fix="upgrade legal-judge (pip install -U legal-judge) or point LEGAL_JUDGE_HOME elsewhere",
                )
            for name, fn in MIGRATIONS:
                if name not in applied:
                    fn(self.db)
                    self.db.execute("INSERT INTO _migrations VALUES (?, ?)", (name, utcnow()))
            return not known <= applied

    @property
    def schema_version(self) -> int:
        """How many migrations are applied."""
        return int(self.db.execute("SELECT COUNT(*) FROM _migrations").fetchone()[0])

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolled back on any exception.

        Inside an open transaction (of this thread: the lock is held for its whole length) it is
        a savepoint of it: rolled back alone on an exception, committed with the outer one.
        """
        # SQLite rolls a transaction back by itself after some failures (a full disk, an I/O
        # error): rolling back again would raise "no transaction is active" and hide the
        # StoreError the user can act on, so each rollback first asks whether one is open.
        with self._lock:
            if self.db.in_transaction:
                self.db.execute(f"SAVEPOINT {_SAVEPOINT}")
                try:
                    yield self.db
                except BaseException:
                    if self.db.in_transaction:
                        self.db.execute(f"ROLLBACK TO {_SAVEPOINT}")
                        self.db.execute(f"RELEASE {_SAVEPOINT}")
                    raise
                self.db.execute(f"RELEASE {_SAVEPOINT}")
                return
            if self.postgres is None:
                yield from self._outermost()
                return
            with self.postgres.pipelined():  # one round trip per transaction, not per statement
                yield from self._outermost()

    def _outermost(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if self.postgres is not None:
                # One writing transaction at a time, as BEGIN IMMEDIATE is on SQLite.
                self.postgres.lock_writers()
            yield self.db
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:  # also a COMMIT that failed: never left open
                self.db.execute("ROLLBACK")
            raise

    def autocommit(self, sql: str, params: tuple[Any, ...]) -> None:
        """Run one write statement as its own atomic transaction (part of an open one, if any).

        A third of the round trips of BEGIN/INSERT/COMMIT on the per-call hot path.
        """
        with self._lock:
            self.db.execute(sql, params)

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def one_row(self, sql: str, params: tuple[Any, ...]) -> dict[str, Any] | None:
        """The first row of a query as a dict, or None (the repositories' "get by id")."""
        row = self.db.execute(sql, params).fetchone()
        return dict(row) if row is not None else None

    def one_json(self, sql: str, params: tuple[Any, ...]) -> Any:
        """The decoded JSON document in the first column of the first row, or None (no row,
        or a NULL document): the repositories' "report of" and "latest report of"."""
        row = self.db.execute(sql, params).fetchone()
        return json.loads(row[0]) if row is not None and row[0] is not None else None

    def has_row(self, sql: str, params: tuple[Any, ...] = ()) -> bool:
        """Whether a query returns a row."""
        return self.db.execute(sql, params).fetchone() is not None

    def resume_fix(self, run_id: str) -> str:
        """The full-disk fix, naming the command that finishes ``run_id`` (a run or an audit)."""
        run = self.db.execute("SELECT kind, config_json FROM runs WHERE id = ?", (run_id,)).fetchone()
        if run is not None and run["kind"] == "run":
            batch = " --batch" if json.loads(run["config_json"]).get("batch") else ""
            then = f"finish the run with `legal-judge run --resume {run_id}{batch}`"
        elif self.db.execute("SELECT 1 FROM audits WHERE id = ?", (run_id,)).fetchone():
            then = f"finish the audit with `legal-judge audit run --resume {run_id}`"
        else:
            then = "run the command again"
        return (f"free space on the disk of {self.path.parent} (or point LEGAL_JUDGE_HOME at a "
                f"larger one), then {then}; everything committed is kept and not paid twice")

    def integrity_check(self) -> str:
        """``PRAGMA integrity_check`` result ("ok" when healthy)."""
        return str(self.db.execute("PRAGMA integrity_check").fetchone()[0])

    def integrity_problems(self, *, limit: int = 5) -> list[str]:
        """What the full ``PRAGMA integrity_check`` finds (empty when the store is sound).

        Raises:
            StoreError: the file is too damaged to be checked at all.
        """
        found = [str(r[0]) for r in self.db.execute(f"PRAGMA integrity_check({int(limit)})")]
        return [] if found == ["ok"] else found
