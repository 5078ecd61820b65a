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

The package: :mod:`~legal_judge.store.migrations` (the schema, an append-only list),
:mod:`~legal_judge.store.connection` (SQLite errors as StoreErrors), :mod:`~legal_judge.store.base`
(the connection, its lock and transactions), one module per table group (``runs``, ``results``,
``outbox``, ``audits``, ``calibrations``, ``labels``, ``records``, ``estimates``) and :mod:`~legal_judge.store.store`
(the :class:`Store` that joins them); ``writes`` holds one judged call's rows until they are
committed together (:class:`PendingWrites`), on a server by a writer thread off a run's event
loop. No module outside this package holds SQL or uses
``store.db``; this ``__init__`` re-exports the public names (the one package whose ``__init__`` is
more than a docstring: ``from legal_judge.store import Store`` is the store's address).
"""

from legal_judge.store.base import canonical_json, document_json, utcnow
from legal_judge.store.connection import BUSY_TIMEOUT_S, damaged_store_fix, store_error
from legal_judge.store.migrations import MIGRATIONS, Migration, migration
from legal_judge.store.runs import OwnedKind
from legal_judge.store.store import Store
from legal_judge.store.writes import PendingWrites

__all__ = ["BUSY_TIMEOUT_S", "MIGRATIONS", "Migration", "OwnedKind", "PendingWrites", "Store",
           "canonical_json", "damaged_store_fix", "document_json", "migration", "store_error",
           "utcnow"]
