"""The offline-first SQLite store.

One file (``$LEGAL_JUDGE_HOME/store.sqlite3``) in WAL mode holds runs, items, every judge call (request,
raw response, usage, latency, cached flag), verdicts, ensemble results, the provider cache, audits and
their hash-chained log, calibrations, human labels and the Langfuse outbox. Migrations are an
append-only numbered list applied on open, so an old store opens with new code and a store written by a
newer version is refused rather than misread.

Every judge call is committed as it completes: a killed run resumes from what is here.

Store trouble is the user's to fix, never an "internal error": a full disk, a damaged file, a lock
held too long or a read-only file raise :class:`~legal_judge.errors.StoreError` (exit 2) naming
the file and the remedy, from whichever query meets it (the connection maps SQLite's codes). A
store is quick-checked (``PRAGMA quick_check``) each time it is opened, before anything is written,
and several processes may open the same new, empty store at once (CI jobs do).
"""

from __future__ import annotations

import functools
import json
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Concatenate, Literal, NoReturn, ParamSpec, TypeVar

from legal_judge.config import store_path
from legal_judge.errors import NotFoundError, StoreError

__all__ = ["OwnedKind", "Store", "canonical_json", "utcnow"]

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    """Register a migration; names are ``mNNN_what`` and the list is append-only."""
    MIGRATIONS.append((fn.__name__, fn))
    return fn


def _script(db: sqlite3.Connection, sql: str) -> None:
    # executescript() would COMMIT the migration transaction midway; run statements one by one.
    for statement in sql.split(";"):
        if statement.strip():
            db.execute(statement)


@migration
def m001_core(db: sqlite3.Connection) -> None:
    _script(db,
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL,
            created_at TEXT NOT NULL, finished_at TEXT,
            config_json TEXT NOT NULL, summary_json TEXT
        );
        CREATE TABLE items (
            run_id TEXT NOT NULL REFERENCES runs(id), item_id TEXT NOT NULL, position INTEGER NOT NULL,
            item_json TEXT NOT NULL, PRIMARY KEY (run_id, item_id)
        );
        CREATE TABLE judge_calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, item_id TEXT NOT NULL,
            judge TEXT NOT NULL, purpose TEXT NOT NULL, attempt INTEGER NOT NULL,
            request_json TEXT NOT NULL, response_text TEXT, usage_json TEXT, latency_ms REAL,
            cached INTEGER NOT NULL DEFAULT 0, retries INTEGER NOT NULL DEFAULT 0, error TEXT,
            created_at TEXT NOT NULL
        );
        CREATE INDEX judge_calls_item ON judge_calls(run_id, item_id, judge);
        CREATE TABLE verdicts (
            run_id TEXT NOT NULL, item_id TEXT NOT NULL, judge TEXT NOT NULL, judge_id TEXT NOT NULL,
            status TEXT NOT NULL, verdict_json TEXT NOT NULL, created_at TEXT NOT NULL,
            PRIMARY KEY (run_id, item_id, judge)
        );
        CREATE TABLE ensemble_results (
            run_id TEXT NOT NULL, item_id TEXT NOT NULL, status TEXT NOT NULL, overall TEXT,
            result_json TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (run_id, item_id)
        );
        CREATE TABLE provider_cache (
            key TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL,
            response_json TEXT NOT NULL, created_at TEXT NOT NULL
        );
        CREATE TABLE lookup_cache (
            key TEXT PRIMARY KEY, value_json TEXT NOT NULL, created_at TEXT NOT NULL
        );
        """
    )


@migration
def m002_audit_calibration_sync(db: sqlite3.Connection) -> None:
    _script(db,
        """
        CREATE TABLE audits (
            id TEXT PRIMARY KEY, created_at TEXT NOT NULL, judge_id TEXT NOT NULL,
            status TEXT NOT NULL, severity TEXT, config_json TEXT NOT NULL, report_json TEXT
        );
        CREATE TABLE audit_log (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, audit_id TEXT NOT NULL, kind TEXT NOT NULL,
            payload_json TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE calibrations (
            id TEXT PRIMARY KEY, run_id TEXT, quarter TEXT NOT NULL, judge_id TEXT,
            rubric_set TEXT, created_at TEXT NOT NULL, report_json TEXT NOT NULL
        );
        CREATE TABLE corrections (
            id TEXT PRIMARY KEY, calibration_id TEXT NOT NULL, created_at TEXT NOT NULL,
            model_json TEXT NOT NULL
        );
        CREATE TABLE human_labels (
            id INTEGER PRIMARY KEY AUTOINCREMENT, item_id TEXT NOT NULL, run_id TEXT,
            rubric TEXT NOT NULL, score TEXT NOT NULL, annotator TEXT NOT NULL,
            labeled_at TEXT NOT NULL, source TEXT NOT NULL, created_at TEXT NOT NULL,
            UNIQUE (item_id, rubric, annotator)
        );
        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT, entity_kind TEXT NOT NULL, entity_id TEXT NOT NULL,
            payload_json TEXT NOT NULL, created_at TEXT NOT NULL, synced_at TEXT,
            attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT,
            UNIQUE (entity_kind, entity_id)
        );
        CREATE TABLE debias_experiments (
            id TEXT PRIMARY KEY, created_at TEXT NOT NULL, judge_id TEXT NOT NULL,
            config_json TEXT NOT NULL, report_json TEXT
        );
        CREATE TABLE batches (
            id TEXT PRIMARY KEY, run_id TEXT NOT NULL, provider TEXT NOT NULL,
            status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
            meta_json TEXT NOT NULL
        );
        """
    )


@migration
def m003_labels_per_run(db: sqlite3.Connection) -> None:
    # A label judges one run's answer: the same item id re-run next quarter is another label, so
    # the key gains the run. SQLite cannot drop a table constraint, hence the rebuild; ids are
    # kept because labels are read in id order. Run-less labels of old stores share one key.
    _script(db,
        """
        CREATE TABLE human_labels_m003 (
            id INTEGER PRIMARY KEY AUTOINCREMENT, item_id TEXT NOT NULL, run_id TEXT,
            rubric TEXT NOT NULL, score TEXT NOT NULL, annotator TEXT NOT NULL,
            labeled_at TEXT NOT NULL, source TEXT NOT NULL, created_at TEXT NOT NULL
        );
        INSERT INTO human_labels_m003 (id, item_id, run_id, rubric, score, annotator, labeled_at,
                                       source, created_at)
            SELECT id, item_id, run_id, rubric, score, annotator, labeled_at, source, created_at
            FROM human_labels;
        DROP TABLE human_labels;
        ALTER TABLE human_labels_m003 RENAME TO human_labels;
        CREATE UNIQUE INDEX human_labels_key
            ON human_labels (item_id, IFNULL(run_id, ''), rubric, annotator)
        """
    )


@migration
def m004_outbox_parking(db: sqlite3.Connection) -> None:
    # An entity that cannot be delivered (a kind this version does not know, a row that is gone,
    # content Langfuse refuses) is parked with its reason and fix instead of failing every sync;
    # the others are delivered. Queueing it again (a refreshed payload) makes it pending again.
    # park_retry: "sync" (retried by every sync: the fix is made in Langfuse) or "upgrade"
    # (retried by another legal-judge version or `sync --retry-parked`).
    _script(db,
        """
        ALTER TABLE outbox ADD COLUMN parked_at TEXT;
        ALTER TABLE outbox ADD COLUMN park_reason TEXT;
        ALTER TABLE outbox ADD COLUMN park_fix TEXT;
        ALTER TABLE outbox ADD COLUMN parked_by TEXT;
        ALTER TABLE outbox ADD COLUMN park_retry TEXT
        """
    )
    # One statement: the trigger body holds semicolons (_script splits on them). It covers every
    # writer of the outbox, including calibration's in-transaction enqueue.
    db.execute(
        """CREATE TRIGGER outbox_requeue_unparks AFTER UPDATE OF payload_json ON outbox
           WHEN NEW.parked_at IS NOT NULL AND NEW.synced_at IS NULL
           BEGIN
             UPDATE outbox SET parked_at = NULL, park_reason = NULL, park_fix = NULL,
                               parked_by = NULL, park_retry = NULL WHERE id = NEW.id;
           END"""
    )


@migration
def m005_run_owner(db: sqlite3.Connection) -> None:
    # The process that is executing a run, so a run whose process died is shown interrupted (with
    # its resume command) instead of "running" forever. NULL for runs of older stores.
    _script(db,
        """
        ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
        ALTER TABLE runs ADD COLUMN owner_host TEXT;
        ALTER TABLE runs ADD COLUMN heartbeat_at TEXT
        """
    )


@migration
def m006_label_comments(db: sqlite3.Connection) -> None:
    # The lawyer's free-text comment on an answer (the sheet's comment column): one per item, run
    # and annotator, as a template row carries it; kept apart from the per-rubric scores so a
    # comment is stored once, not copied onto every rubric of the row. Run-less rows share a key.
    _script(db,
        """
        CREATE TABLE label_comments (
            id INTEGER PRIMARY KEY AUTOINCREMENT, item_id TEXT NOT NULL, run_id TEXT,
            annotator TEXT NOT NULL, comment TEXT NOT NULL, labeled_at TEXT NOT NULL,
            source TEXT NOT NULL, created_at TEXT NOT NULL
        );
        CREATE UNIQUE INDEX label_comments_key
            ON label_comments (item_id, IFNULL(run_id, ''), annotator)
        """
    )


@migration
def m007_audit_owner(db: sqlite3.Connection) -> None:
    # The process executing an audit, as m005_run_owner for runs: a killed audit is shown
    # interrupted (with `audit run --resume`) instead of "running" forever. NULL for older audits.
    _script(db,
        """
        ALTER TABLE audits ADD COLUMN owner_pid INTEGER;
        ALTER TABLE audits ADD COLUMN owner_host TEXT;
        ALTER TABLE audits ADD COLUMN heartbeat_at TEXT
        """
    )


#: What can have an owning process, and its table.
OwnedKind = Literal["run", "audit"]
_OWNED_TABLES: dict[str, str] = {"run": "runs", "audit": "audits"}


def utcnow() -> str:
    """Current UTC time as ISO 8601 with microseconds."""
    return datetime.now(UTC).isoformat()


def canonical_json(value: Any) -> str:
    """Sorted, compact JSON: the form used for hashes and cache keys."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# Connection layer: SQLite failures the user can act on become StoreErrors -----------------------
BUSY_TIMEOUT_S = 30.0

# Primary result codes of sqlite3.h that mean "the store needs the user", not "legal-judge has a bug".
_PERM, _BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _PROTOCOL, _NOTADB = (
    3, 5, 6, 8, 10, 11, 13, 14, 15, 26)


def _free_bytes(path: Path) -> int | None:
    try:
        return shutil.disk_usage(path.parent).free
    except OSError:
        return None


def _full(path: Path, detail: str) -> StoreError:
    free = _free_bytes(path)
    left = "" if free is None else f"; {free / 2**20:.1f} MiB left"
    return StoreError(
        f"the disk holding the store {path} is full ({detail}{left})", code="store-full",
        fix=f"free space on the disk of {path.parent} (or point LEGAL_JUDGE_HOME at a larger one), "
            "then run the command again; everything committed is kept, and an unfinished run "
            "resumes with `legal-judge run --resume RUN_ID` (`legal-judge runs list` shows it)")


def damaged_store_fix(path: Path) -> str:
    """What to do with a damaged store file (also printed by ``doctor``)."""
    aside = path.parent / "damaged"
    return (f"restore {path} from a backup, or move it aside with its -wal and -shm files "
            f"(mkdir {aside} && mv {path}* {aside}/) and run the command again to start an "
            f"empty store; `sqlite3 {aside / path.name} .recover` may salvage its rows")


def store_error(exc: sqlite3.Error, path: Path, *,
                waited_s: float = BUSY_TIMEOUT_S) -> StoreError | None:
    """The :class:`StoreError` for a SQLite failure the user must fix, or None for a bug.

    Args:
        exc: What SQLite raised.
        path: The store file, named in the message.
        waited_s: The busy timeout that ran out, for a locked store.
    """
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(code, int):
        return None
    primary = code & 0xFF
    detail = str(exc)
    if primary == _FULL or (primary == _IOERR and _free_bytes(path) == 0):
        return _full(path, detail)
    if primary in (_CORRUPT, _NOTADB):
        return StoreError(f"the store {path} is damaged ({detail})", code="store-damaged",
                          fix=damaged_store_fix(path))
    if primary in (_BUSY, _LOCKED, _PROTOCOL):
        return StoreError(
            f"the store {path} is locked by another process (waited {waited_s:g} s: "
            f"{detail})", code="store-locked",
            fix="let the other legal-judge command using this store finish, then run this one "
                "again; if none is running, LEGAL_JUDGE_HOME may be on a network folder, where "
                "SQLite locking does not work: put it on a local disk")
    if primary in (_READONLY, _PERM):
        return StoreError(f"the store {path} cannot be written ({detail})", code="store-readonly",
                          fix=f"make {path} and its folder writable (chmod u+w), or point "
                              "LEGAL_JUDGE_HOME at a writable folder")
    if primary == _CANTOPEN:
        return StoreError(f"cannot open the store {path} ({detail})", code="store-cannot-open",
                          fix="check LEGAL_JUDGE_HOME points at a folder you can write to")
    if primary == _IOERR:
        return StoreError(f"disk I/O error on the store {path} ({detail})", code="store-io",
                          fix="check the disk holding it (free space, permissions, health; a "
                              "network folder is not supported), then run the command again")
    return None


class _Cursor(sqlite3.Cursor):
    """A cursor whose user-fixable SQLite failures (also while rows are read) are StoreErrors."""

    def _fail(self, exc: sqlite3.Error) -> NoReturn:
        db = self.connection
        error = store_error(exc, getattr(db, "store_path", Path("store.sqlite3")),
                            waited_s=getattr(db, "timeout_s", BUSY_TIMEOUT_S))
        if error is None:
            raise exc  # a bug (bad SQL, a constraint): callers and tests see SQLite's own error
        raise error from exc

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.Error as exc:
            self._fail(exc)

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> _Cursor:
        try:
            return super().executemany(sql, seq_of_parameters)
        except sqlite3.Error as exc:
            self._fail(exc)

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.Error as exc:
            self._fail(exc)

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        try:
            return super().fetchmany(size)
        except sqlite3.Error as exc:
            self._fail(exc)

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.Error as exc:
            self._fail(exc)

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.Error as exc:
            self._fail(exc)


class _Connection(sqlite3.Connection):
    """The store's connection: every statement runs on a :class:`_Cursor`."""

    store_path: Path
    timeout_s: float

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        return self.cursor(_Cursor).execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> _Cursor:
        return self.cursor(_Cursor).executemany(sql, parameters)


def _connect(path: Path, timeout_s: float) -> _Connection:
    try:
        db = sqlite3.connect(path, timeout=timeout_s, isolation_level=None,
                             check_same_thread=False, factory=_Connection)
    except sqlite3.Error as exc:
        raise store_error(exc, path, waited_s=timeout_s) or StoreError(
            f"cannot open the store {path} ({exc})", code="store-cannot-open",
            fix="check LEGAL_JUDGE_HOME points at a folder you can write to") from None
    db.store_path = path
    db.timeout_s = timeout_s
    db.row_factory = sqlite3.Row
    return db


def _wal(db: _Connection) -> None:
    # Switching a new store to WAL needs an exclusive lock, and SQLite answers SQLITE_BUSY at once,
    # without the busy handler, when two processes race for it (deadlock avoidance): two commands
    # started together on a new home would fail. Retry within the busy timeout instead.
    deadline = time.monotonic() + db.timeout_s
    delay = 0.002
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL").fetchall()
            return
        except StoreError as exc:
            if exc.code != "store-locked" or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def _quick_check(db: _Connection, path: Path) -> None:
    # Before anything is written: a damaged file is refused, not appended to (or listed as sound).
    found = [str(r[0]) for r in db.execute("PRAGMA quick_check(3)").fetchall()]
    if found != ["ok"]:
        raise StoreError(f"the store {path} is damaged (quick_check: {'; '.join(found)})",
                         code="store-damaged", fix=damaged_store_fix(path))


P = ParamSpec("P")
R = TypeVar("R")


def _names_the_run(method: Callable[Concatenate[Store, str, P], R]
                   ) -> Callable[Concatenate[Store, str, P], R]:
    """On a full disk, the fix names the exact resume command of the run being written."""
    @functools.wraps(method)
    def wrapper(self: Store, run_id: str, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, run_id, *args, **kwargs)
        except StoreError as exc:
            if exc.code != "store-full":
                raise
            raise StoreError(exc.message, code=exc.code, fix=self.resume_fix(run_id)) from exc
    return wrapper


def _insert_items(db: sqlite3.Connection, run_id: str, items: Iterable[dict[str, Any]]) -> None:
    db.executemany(  # rows made one at a time: a large run's items are not all encoded at once
        "INSERT OR IGNORE INTO items (run_id, item_id, position, item_json) VALUES (?, ?, ?, ?)",
        ((run_id, it["id"], i, canonical_json(it)) for i, it in enumerate(items)),
    )


class Store:
    """A connection to the store with the queries the core modules share.

    Modules with their own tables (audit log, calibration, sync) query ``store.db`` directly inside
    ``store.transaction()``.
    """

    def __init__(self, path: Path | str | None = None, *,
                 timeout_s: float = BUSY_TIMEOUT_S) -> None:
        """Open (and create or migrate) the store.

        Args:
            path: The store file; default ``$LEGAL_JUDGE_HOME/store.sqlite3``.
            timeout_s: How long a statement waits for another process's lock.

        Raises:
            StoreError: the store is damaged, full, locked, read-only or from a newer version.
        """
        self.path = Path(path) if path is not None else store_path()
        self.db: sqlite3.Connection = _connect(self.path, timeout_s)
        self._lock = threading.RLock()
        try:
            _wal(self.db)
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            _quick_check(self.db, self.path)
            self._migrate()
        except BaseException:
            self.db.close()
            raise

    def _migrate(self) -> None:
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

    @property
    def schema_version(self) -> int:
        """How many migrations are applied."""
        return int(self.db.execute("SELECT COUNT(*) FROM _migrations").fetchone()[0])

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolled back on any exception."""
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        # One statement in autocommit mode is its own atomic transaction: a third of the
        # round trips of BEGIN/INSERT/COMMIT on the per-call hot path.
        with self._lock:
            self.db.execute(sql, params)

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

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

    # runs -------------------------------------------------------------------------------------
    def create_run(self, run_id: str, *, kind: str, config: dict[str, Any],
                   items: Iterable[dict[str, Any]] | None = None) -> None:
        """Record a new run, with its items in the same commit when given.

        A process killed while starting then leaves either nothing or a resumable run, never a run
        without its items (which a resume would "complete" with no results).
        """
        with self.transaction() as db:
            db.execute(
                "INSERT INTO runs (id, kind, status, created_at, config_json) VALUES (?, ?, ?, ?, ?)",
                (run_id, kind, "running", utcnow(), canonical_json(config)),
            )
            if items is not None:
                _insert_items(db, run_id, items)

    @_names_the_run
    def finish_run(self, run_id: str, *, status: str, summary: dict[str, Any] | None) -> None:
        """Set a run's final status and summary."""
        with self.transaction() as db:
            db.execute(
                "UPDATE runs SET status = ?, finished_at = ?, summary_json = ? WHERE id = ?",
                (status, utcnow(), canonical_json(summary) if summary is not None else None, run_id),
            )

    def get_run(self, run_id: str) -> dict[str, Any]:
        """A run row with decoded config and summary."""
        row = self.db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no run '{run_id}' in {self.path}",
                                fix="`legal-judge runs list` shows the runs in this store")
        out = dict(row)
        out["config"] = json.loads(out.pop("config_json"))
        summary = out.pop("summary_json")
        out["summary"] = json.loads(summary) if summary else None
        return out

    def list_runs(self, *, limit: int = 50) -> list[dict[str, Any]]:
        """Most recent runs first, with item and result counts."""
        rows = self.db.execute(
            """SELECT r.id, r.kind, r.status, r.created_at, r.finished_at,
                      (SELECT COUNT(*) FROM items i WHERE i.run_id = r.id) AS items,
                      (SELECT COUNT(*) FROM ensemble_results e WHERE e.run_id = r.id) AS results
               FROM runs r ORDER BY r.created_at DESC LIMIT ?""",
            (limit,),
        )
        return [dict(r) for r in rows]

    def save_items(self, run_id: str, items: list[dict[str, Any]]) -> None:
        """Store the run's items (idempotent)."""
        with self.transaction() as db:
            _insert_items(db, run_id, items)

    def load_items(self, run_id: str) -> list[dict[str, Any]]:
        """The run's items in dataset order."""
        rows = self.db.execute(
            "SELECT item_json FROM items WHERE run_id = ? ORDER BY position", (run_id,)
        )
        return [json.loads(r[0]) for r in rows]

    # judge calls and verdicts -----------------------------------------------------------------
    @_names_the_run
    def record_call(self, run_id: str, item_id: str, judge: str, *, purpose: str, attempt: int,
                    request: dict[str, Any], response_text: str | None, usage: dict[str, Any] | None,
                    latency_ms: float | None, cached: bool, retries: int, error: str | None,
                    cache: tuple[str, str, str, dict[str, Any]] | None = None) -> None:
        """Append one provider call (successful or not) to the call log.

        Args:
            cache: ``(key, provider, model, response)`` to remember in the provider cache in the
                same transaction (one commit per call on the hot path).
        """
        row = (run_id, item_id, judge, purpose, attempt, canonical_json(request), response_text,
               canonical_json(usage) if usage is not None else None, latency_ms, int(cached),
               retries, error, utcnow())
        sql = """INSERT INTO judge_calls (run_id, item_id, judge, purpose, attempt, request_json,
                 response_text, usage_json, latency_ms, cached, retries, error, created_at)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
        if cache is None:
            self._write(sql, row)
            return
        key, provider, model, response = cache
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO provider_cache VALUES (?, ?, ?, ?, ?)",
                       (key, provider, model, canonical_json(response), utcnow()))
            db.execute(sql, row)

    @_names_the_run
    def save_verdict(self, run_id: str, item_id: str, judge: str, verdict: dict[str, Any]) -> None:
        """Commit one judge's verdict on one item."""
        self._write(
            "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run_id, item_id, judge, verdict["judge_id"], verdict["status"], canonical_json(verdict),
             utcnow()),
        )

    def load_verdicts(self, run_id: str) -> dict[tuple[str, str], dict[str, Any]]:
        """Verdicts of a run keyed by (item_id, judge)."""
        rows = self.db.execute(
            "SELECT item_id, judge, verdict_json FROM verdicts WHERE run_id = ?", (run_id,)
        )
        return {(r[0], r[1]): json.loads(r[2]) for r in rows}

    @_names_the_run
    def save_result(self, run_id: str, item_id: str, result: dict[str, Any]) -> None:
        """Commit the ensemble result of one item."""
        self._write(
            "INSERT OR REPLACE INTO ensemble_results VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, item_id, result["status"], result.get("overall"), canonical_json(result),
             utcnow()),
        )

    def iter_verdicts(self, run_id: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Verdicts of a run one at a time (large runs: nothing else is kept in memory)."""
        cursor = self.db.execute(
            "SELECT item_id, judge, verdict_json FROM verdicts WHERE run_id = ?", (run_id,))
        for item_id, judge, data in cursor:
            yield item_id, judge, json.loads(data)

    def iter_results(self, run_id: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """Ensemble results of a run one at a time."""
        cursor = self.db.execute(
            "SELECT item_id, result_json FROM ensemble_results WHERE run_id = ?", (run_id,))
        for item_id, data in cursor:
            yield item_id, json.loads(data)

    def iter_items(self, run_id: str) -> Iterator[dict[str, Any]]:
        """The run's items in dataset order, one at a time."""
        cursor = self.db.execute(
            "SELECT item_json FROM items WHERE run_id = ? ORDER BY position", (run_id,))
        for (data,) in cursor:
            yield json.loads(data)

    def load_results(self, run_id: str) -> dict[str, dict[str, Any]]:
        """Ensemble results of a run keyed by item id."""
        rows = self.db.execute(
            "SELECT item_id, result_json FROM ensemble_results WHERE run_id = ?", (run_id,)
        )
        return {r[0]: json.loads(r[1]) for r in rows}

    def call_counts(self, run_id: str) -> dict[str, int]:
        """Provider calls of a run: total, cached, failed, retries."""
        row = self.db.execute(
            """SELECT COUNT(*), COALESCE(SUM(cached), 0), COALESCE(SUM(error IS NOT NULL), 0),
                      COALESCE(SUM(retries), 0) FROM judge_calls WHERE run_id = ?""",
            (run_id,),
        ).fetchone()
        return {"calls": row[0], "cached": row[1], "failed": row[2], "retries": row[3]}

    # caches ------------------------------------------------------------------------------------
    def cache_get(self, key: str) -> dict[str, Any] | None:
        """A cached provider response, or None."""
        row = self.db.execute(
            "SELECT response_json FROM provider_cache WHERE key = ?", (key,)
        ).fetchone()
        return json.loads(row[0]) if row else None

    def cache_put(self, key: str, *, provider: str, model: str, response: dict[str, Any]) -> None:
        """Remember a provider response under its request key."""
        self._write("INSERT OR REPLACE INTO provider_cache VALUES (?, ?, ?, ?, ?)",
                    (key, provider, model, canonical_json(response), utcnow()))

    def lookup_get(self, key: str) -> dict[str, Any] | None:
        """A cached citation lookup (CourtListener), or None."""
        row = self.db.execute("SELECT value_json FROM lookup_cache WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def lookup_put(self, key: str, value: dict[str, Any]) -> None:
        """Remember a citation lookup."""
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO lookup_cache VALUES (?, ?, ?)",
                       (key, canonical_json(value), utcnow()))

    # outbox ------------------------------------------------------------------------------------
    def outbox_put(self, kind: str, entity_id: str, payload: dict[str, Any]) -> None:
        """Queue (or refresh) an entity for Langfuse; a refreshed entity is pending again."""
        with self.transaction() as db:
            db.execute(
                """INSERT INTO outbox (entity_kind, entity_id, payload_json, created_at)
                   VALUES (?, ?, ?, ?)
                   ON CONFLICT (entity_kind, entity_id) DO UPDATE SET
                     payload_json = excluded.payload_json, synced_at = NULL""",
                (kind, entity_id, canonical_json(payload), utcnow()),
            )

    def outbox_pending(self, *, limit: int = 10_000) -> list[dict[str, Any]]:
        """Entities not yet delivered and not parked, oldest first."""
        rows = self.db.execute(
            """SELECT id, entity_kind, entity_id, payload_json, attempts, last_error FROM outbox
               WHERE synced_at IS NULL AND parked_at IS NULL ORDER BY id LIMIT ?""",
            (limit,),
        )
        return [{**dict(r), "payload": json.loads(r["payload_json"])} for r in rows]

    def outbox_park(self, ids: list[int], *, reason: str, fix: str, by: str,
                    retry: str = "upgrade") -> None:
        """Park outbox rows that cannot be delivered: kept, not pending, listed with the fix.

        ``by`` is the legal-judge version that parked them; ``retry`` says when a sync tries
        them again: ``sync`` (every sync) or ``upgrade`` (another version, or on request).
        """
        with self.transaction() as db:
            db.executemany(
                """UPDATE outbox SET parked_at = ?, park_reason = ?, park_fix = ?, parked_by = ?,
                          park_retry = ?, attempts = attempts + 1, last_error = ? WHERE id = ?""",
                [(utcnow(), reason[:500], fix[:500], by, retry, reason[:500], i) for i in ids],
            )

    def outbox_parked(self) -> list[dict[str, Any]]:
        """Parked (undelivered) entities, oldest first, with reason, fix and parking version."""
        rows = self.db.execute(
            """SELECT id, entity_kind, entity_id, attempts, last_error, parked_at, park_reason,
                      park_fix, parked_by, park_retry FROM outbox
               WHERE synced_at IS NULL AND parked_at IS NOT NULL ORDER BY id""")
        return [dict(r) for r in rows]

    def outbox_unpark(self, ids: list[int]) -> None:
        """Make parked rows pending again (the next sync retries them)."""
        with self.transaction() as db:
            db.executemany(
                """UPDATE outbox SET parked_at = NULL, park_reason = NULL, park_fix = NULL,
                          parked_by = NULL, park_retry = NULL WHERE id = ?""",
                [(i,) for i in ids])

    def outbox_drop(self, ids: list[int]) -> None:
        """Remove outbox rows (a parked entity the user gives up on; the store keeps the entity)."""
        with self.transaction() as db:
            db.executemany("DELETE FROM outbox WHERE id = ?", [(i,) for i in ids])

    def outbox_mark(self, ids: list[int], *, error: str | None = None) -> None:
        """Mark outbox rows delivered (``error is None``) or failed once more."""
        with self.transaction() as db:
            if error is None:
                db.executemany("UPDATE outbox SET synced_at = ?, last_error = NULL WHERE id = ?",
                               [(utcnow(), i) for i in ids])
            else:
                db.executemany(
                    "UPDATE outbox SET attempts = attempts + 1, last_error = ? WHERE id = ?",
                    [(error[:500], i) for i in ids],
                )

    def outbox_status(self) -> dict[str, int]:
        """Counts of pending (not parked) and delivered outbox rows (parked: :meth:`outbox_parked`)."""
        row = self.db.execute(
            """SELECT COALESCE(SUM(synced_at IS NULL AND parked_at IS NULL), 0),
                      COALESCE(SUM(synced_at IS NOT NULL), 0) FROM outbox"""
        ).fetchone()
        return {"pending": row[0], "delivered": row[1]}

    # owners of runs and audits (m005_run_owner, m007_audit_owner) ------------------------------
    def claim_owner(self, kind: OwnedKind, entity_id: str, *, pid: int, host: str) -> None:
        """Record this process as the one executing a run or an audit (a new one or a resume)."""
        table = _OWNED_TABLES[kind]
        with self.transaction() as db:
            db.execute(f"UPDATE {table} SET status = 'running', owner_pid = ?, owner_host = ?, "  # noqa: S608
                       "heartbeat_at = ? WHERE id = ?", (pid, host, utcnow(), entity_id))

    def beat_owner(self, kind: OwnedKind, entity_id: str, *, pid: int) -> None:
        """Refresh the owner's heartbeat (only while ``pid`` still owns the run or audit)."""
        self._write(f"UPDATE {_OWNED_TABLES[kind]} SET heartbeat_at = ? "  # noqa: S608
                    "WHERE id = ? AND owner_pid = ?", (utcnow(), entity_id, pid))

    def owners(self, kind: OwnedKind, ids: list[str]) -> dict[str, dict[str, Any]]:
        """Id -> ``{"status", "pid", "host", "heartbeat_at"}`` of runs or audits (None values for
        those never claimed; ids not in the store are left out)."""
        table = _OWNED_TABLES[kind]
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            rows = self.db.execute(
                f"SELECT id, status, owner_pid, owner_host, heartbeat_at FROM {table} "  # noqa: S608
                f"WHERE id IN ({', '.join('?' * len(chunk))})", chunk)
            out.update({r[0]: {"status": r[1], "pid": r[2], "host": r[3], "heartbeat_at": r[4]}
                        for r in rows})
        return out

    # lawyers' comments (m006_label_comments) ----------------------------------------------------
    def stored_label_comments(self) -> dict[tuple[str, str, str], str]:
        """``(item_id, run_id or "", annotator) -> comment`` of every stored comment."""
        return {(r[0], r[1], r[2]): r[3] for r in self.db.execute(
            "SELECT item_id, IFNULL(run_id, ''), annotator, comment FROM label_comments")}

    @staticmethod
    def upsert_label_comment(db: sqlite3.Connection, *, item_id: str, run_id: str | None,
                             annotator: str, comment: str, labeled_at: str, source: str) -> None:
        """Store one lawyer's comment on one answer, inside the caller's open transaction (the
        labels of the same import are written in it: all or nothing)."""
        db.execute(
            """INSERT INTO label_comments (item_id, run_id, annotator, comment, labeled_at, source,
               created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (item_id, IFNULL(run_id, ''), annotator) DO UPDATE SET
                 comment = excluded.comment, labeled_at = excluded.labeled_at,
                 source = excluded.source""",
            (item_id, run_id, annotator, comment, labeled_at, source, utcnow()),
        )

    def label_comments(self, run_id: str) -> list[dict[str, str]]:
        """The lawyers' comments on a run's answers, in import order.

        As for labels, a comment tied to the run wins; a run-less one counts only where the same
        annotator left none on the run's item; comments tied to another run are left out.

        Returns:
            ``{"item_id", "annotator", "comment"}`` dicts.
        """
        rows = self.db.execute(
            """SELECT c.item_id, c.annotator, c.comment
               FROM label_comments c JOIN items i ON i.item_id = c.item_id AND i.run_id = ?
               WHERE c.run_id = ? OR (c.run_id IS NULL AND NOT EXISTS (
                   SELECT 1 FROM label_comments o WHERE o.item_id = c.item_id AND o.run_id = ?
                     AND o.annotator = c.annotator))
               ORDER BY c.id""",
            (run_id, run_id, run_id),
        )
        return [{"item_id": r[0], "annotator": r[1], "comment": r[2]} for r in rows]

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
