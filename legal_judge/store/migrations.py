"""The store's schema: an append-only list of numbered migrations, applied on open.

A migration is registered with :func:`migration` and named ``mNNN_what``; the name is its identity
(recorded in ``_migrations``), so a migration is never edited or removed once released: a change is
a new one appended at the end. A store that lists a name this version does not know was written by
a newer version and is refused (:mod:`legal_judge.store.base`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

__all__ = ["MIGRATIONS", "Migration", "migration"]

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


def _owner_columns(db: sqlite3.Connection, table: str) -> None:
    # The owning process of a run or an audit (m005, m007): pid, host and last heartbeat.
    _script(db, f"""
        ALTER TABLE {table} ADD COLUMN owner_pid INTEGER;
        ALTER TABLE {table} ADD COLUMN owner_host TEXT;
        ALTER TABLE {table} ADD COLUMN heartbeat_at TEXT
        """)


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
    if getattr(db, "dialect", "sqlite") == "postgresql":
        # The same rule as a PostgreSQL row trigger (its body is a function).
        db.execute(
            """CREATE FUNCTION outbox_requeue_unparks() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN
                 IF NEW.parked_at IS NOT NULL AND NEW.synced_at IS NULL THEN
                   NEW.parked_at := NULL; NEW.park_reason := NULL; NEW.park_fix := NULL;
                   NEW.parked_by := NULL; NEW.park_retry := NULL;
                 END IF;
                 RETURN NEW;
               END $$""")
        db.execute("CREATE TRIGGER outbox_requeue_unparks BEFORE UPDATE OF payload_json ON outbox "
                   "FOR EACH ROW EXECUTE FUNCTION outbox_requeue_unparks()")
        return
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
    _owner_columns(db, "runs")


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
    _owner_columns(db, "audits")


@migration
def m008_verdict_key(db: sqlite3.Connection) -> None:
    # A run's verdict row is also its verdict cache entry: the key of the judgment (judge_id and
    # every item field the prompt uses) on the row, instead of a second copy of the verdict in
    # provider_cache. NULL for rows of older stores (their provider_cache entries still answer)
    # and for verdicts that were themselves served from the cache.
    _script(db,
        """
        ALTER TABLE verdicts ADD COLUMN verdict_key TEXT;
        CREATE INDEX verdicts_key ON verdicts (verdict_key) WHERE verdict_key IS NOT NULL
        """
    )


@migration
def m009_run_estimates(db: sqlite3.Connection) -> None:
    # A run's figures corrected for judge error, pinned: each row is one estimate as computed,
    # with the calibration it rests on and that calibration's date. Rows are only ever added
    # (never updated): newer evidence is a new row with the next seq, and a run shows its latest.
    _script(db,
        """
        CREATE TABLE run_estimates (
            id TEXT PRIMARY KEY, run_id TEXT NOT NULL, seq INTEGER NOT NULL,
            calibration_id TEXT, calibration_date TEXT, chosen_by TEXT NOT NULL,
            created_at TEXT NOT NULL, estimate_json TEXT NOT NULL,
            UNIQUE (run_id, seq)
        )
        """
    )


@migration
def m010_judge_validations(db: sqlite3.Connection) -> None:
    # `calibrate validate` / `calibrate align`: a judge change validated against the lawyers, kept
    # with the candidate's judge_id (its verdict, what it may gate on, when to revalidate). Rows
    # are only added: a newer validation of the same judge is a new row, never an update.
    _script(db,
        """
        CREATE TABLE judge_validations (
            id TEXT PRIMARY KEY, judge_id TEXT, candidate TEXT NOT NULL,
            incumbent_judge_id TEXT, verdict TEXT NOT NULL, created_at TEXT NOT NULL,
            expires_at TEXT, report_json TEXT NOT NULL
        );
        CREATE INDEX judge_validations_judge ON judge_validations (judge_id, created_at)
        """
    )


@migration
def m011_escalations(db: sqlite3.Connection) -> None:
    # The escalation of a run (calibrate escalate): the threshold chosen on lawyer labels, its
    # guarantee and the escalated item ids, one row per decision, never rewritten (a newer
    # escalation of the same run is a new row; the run's figures use the newest).
    _script(db,
        """
        CREATE TABLE escalations (
            id TEXT PRIMARY KEY, run_id TEXT NOT NULL, created_at TEXT NOT NULL,
            target REAL NOT NULL, confidence REAL NOT NULL, rubric TEXT,
            guaranteed INTEGER NOT NULL, report_json TEXT NOT NULL
        );
        CREATE INDEX escalations_run ON escalations (run_id, created_at)
        """
    )
