"""The connection layer: SQLite failures the user can act on become StoreErrors (and the fixes
of a PostgreSQL server's refusals the user can act on).

Every statement of the store runs on a :class:`StoreCursor`, so a full disk, a damaged file, a lock
held too long or a read-only file raise :class:`~legal_judge.errors.StoreError` (exit 2) naming the
file and the remedy, from whichever query meets it, also while rows are read.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import parse_qs, urlsplit

from legal_judge.errors import StoreError

__all__ = ["BUSY_TIMEOUT_S", "StoreConnection", "StoreCursor", "connect", "damaged_store_fix",
           "enable_wal", "quick_check", "refused_connection_fix", "search_path_schema",
           "store_error"]

BUSY_TIMEOUT_S = 30.0

# Primary result codes of sqlite3.h that mean "the store needs the user", not "legal-judge has a bug".
_PERM, _BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _PROTOCOL, _NOTADB = (
    3, 5, 6, 8, 10, 11, 13, 14, 15, 26)


def refused_connection_fix(message: str) -> str | None:
    """The fix for a connection a PostgreSQL server refused for a reason the user fixes, else
    None (a server down or unreachable: a rerun resumes)."""
    if "does not exist" in message and "database" in message:
        return ("create the database (createdb NAME) or correct its name in the URL "
                "(LEGAL_JUDGE_STORE or [store] url in legal-judge.toml)")
    if "authentication failed" in message or "no password supplied" in message:
        return ("give the user's password in PGPASSWORD or ~/.pgpass (never in the URL), or "
                "correct the user name in LEGAL_JUDGE_STORE or [store] url")
    return None


def search_path_schema(url: str) -> str | None:
    """The first schema a store URL's ``options=-csearch_path=...`` names, if it names one."""
    options = parse_qs(urlsplit(url).query).get("options", [""])[0]
    found = re.search(r"search_path\s*=\s*([^\s,]+)", options)
    return found.group(1) if found else None


def _free_bytes(path: Path) -> int | None:
    try:
        return shutil.disk_usage(path.parent).free
    except OSError:
        return None


def chosen_by(path: Path) -> str:
    """The setting a fix tells the user to change for the store ``path``: ``LEGAL_JUDGE_STORE``
    or the project file's ``[store] url`` when that chose it, ``LEGAL_JUDGE_HOME`` for the
    default store, and the command's store argument for a store named there."""
    from legal_judge.config import store_setting
    from legal_judge.errors import LegalJudgeError

    try:
        setting = store_setting()
    except LegalJudgeError:  # a broken project file is reported where it is read
        return "LEGAL_JUDGE_HOME"
    if isinstance(setting.target, Path) and setting.target.resolve() == path.resolve():
        return "LEGAL_JUDGE_HOME" if setting.origin == "default" else setting.origin
    return "the command's store argument"


def _full(path: Path, detail: str) -> StoreError:
    free = _free_bytes(path)
    left = "" if free is None else f"; {free / 2**20:.1f} MiB left"
    return StoreError(
        f"the disk holding the store {path} is full ({detail}{left})", code="store-full",
        fix=f"free space on the disk of {path.parent} (or point {chosen_by(path)} at a larger one), "
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
                f"again; if none is running, {path.parent} may be on a network folder, where "
                f"SQLite locking does not work: put the store on a local disk ({chosen_by(path)})")
    if primary in (_READONLY, _PERM):
        return StoreError(f"the store {path} cannot be written ({detail})", code="store-readonly",
                          fix=f"make {path} and its folder writable (chmod u+w), or point "
                              f"{chosen_by(path)} at a writable folder")
    if primary == _CANTOPEN:
        return StoreError(f"cannot open the store {path} ({detail})", code="store-cannot-open",
                          fix=f"check that {path.parent} is a folder you can write to, or point "
                              f"{chosen_by(path)} at one")
    if primary == _IOERR:
        return StoreError(f"disk I/O error on the store {path} ({detail})", code="store-io",
                          fix="check the disk holding it (free space, permissions, health; a "
                              "network folder is not supported), then run the command again")
    return None


#: Rows a ``for`` over a :class:`StoreCursor` reads at a time.
_ROWS_PER_FETCH = 256


class StoreCursor(sqlite3.Cursor):
    """A cursor whose user-fixable SQLite failures (also while rows are read) are StoreErrors."""

    def _fail(self, exc: sqlite3.Error) -> NoReturn:
        db = self.connection
        error = store_error(exc, getattr(db, "store_path", Path("store.sqlite3")),
                            waited_s=getattr(db, "timeout_s", BUSY_TIMEOUT_S))
        if error is None:
            raise exc  # a bug (bad SQL, a constraint): callers and tests see SQLite's own error
        raise error from exc

    def _guarded(self, method: Callable[..., Any], *args: Any) -> Any:
        try:
            return method(*args)
        except sqlite3.Error as exc:
            self._fail(exc)

    def execute(self, sql: str, parameters: Any = (), /) -> StoreCursor:
        return self._guarded(super().execute, sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> StoreCursor:
        return self._guarded(super().executemany, sql, seq_of_parameters)

    def fetchone(self) -> Any:
        return self._guarded(super().fetchone)

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        return self._guarded(super().fetchmany, size)

    def fetchall(self) -> list[Any]:
        return self._guarded(super().fetchall)

    def __next__(self) -> Any:
        return self._guarded(super().__next__)

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]  # an iterator, not self
        # A ``for`` over the cursor reads the rows in batches: this class's ``__next__`` is a
        # Python call per row (a summary of 1,000 items reads 7,000 rows). Every read still goes
        # through ``fetchmany``, so a failure while reading is a StoreError as before.
        while rows := self.fetchmany(_ROWS_PER_FETCH):
            yield from rows


class StoreConnection(sqlite3.Connection):
    """The store's connection: every statement runs on a :class:`StoreCursor`."""

    store_path: Path
    timeout_s: float
    #: Which SQL the connection speaks (the PostgreSQL backend's says "postgresql").
    dialect = "sqlite"

    def execute(self, sql: str, parameters: Any = (), /) -> StoreCursor:
        return self.cursor(StoreCursor).execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> StoreCursor:
        return self.cursor(StoreCursor).executemany(sql, parameters)


def connect(path: Path, timeout_s: float) -> StoreConnection:
    try:
        db = sqlite3.connect(path, timeout=timeout_s, isolation_level=None,
                             check_same_thread=False, factory=StoreConnection)
    except sqlite3.Error as exc:
        raise store_error(exc, path, waited_s=timeout_s) or StoreError(
            f"cannot open the store {path} ({exc})", code="store-cannot-open",
            fix=f"check that {path.parent} is a folder you can write to, or point "
                              f"{chosen_by(path)} at one") from None
    db.store_path = path
    db.timeout_s = timeout_s
    db.row_factory = sqlite3.Row
    return db


def enable_wal(db: StoreConnection) -> None:
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


def quick_check(db: StoreConnection, path: Path) -> None:
    # Before anything is written: a damaged file is refused, not appended to (or listed as sound).
    found = [str(r[0]) for r in db.execute("PRAGMA quick_check(3)").fetchall()]
    if found != ["ok"]:
        raise StoreError(f"the store {path} is damaged (quick_check: {'; '.join(found)})",
                         code="store-damaged", fix=damaged_store_fix(path))

